# signupd em português do Brasil: cada palavra que um visitante lê nas páginas e nos dois e-mails.
# Os identificadores das mensagens e as variáveis ($list, $site, ...) são os de en.ftl.
#
# Tratamento: "você"; frases curtas.
# Glossário:
#   sign up / signup        - inscrever-se / inscrição
#   confirm                 - confirmar
#   list                    - lista
#   remove (my address)     - remover (meu endereço); os dados são "excluídos"
#   preferences             - preferências / página de preferências
#   email address           - endereço de e-mail (curto: endereço)
#   link                    - link
#   subscription            - inscrição
#   unsubscribe             - cancelar a inscrição
#   mail                    - e-mail
#   one-way hash            - hash irreversível

## Mail dates

date-format =
    { $day ->
        [1] 1º
       *[other] { $day }
    } de { $month } de { $year }, { $time } UTC
date-month-1 = janeiro
date-month-2 = fevereiro
date-month-3 = março
date-month-4 = abril
date-month-5 = maio
date-month-6 = junho
date-month-7 = julho
date-month-8 = agosto
date-month-9 = setembro
date-month-10 = outubro
date-month-11 = novembro
date-month-12 = dezembro

## Durations

duration-second =
    { $n ->
        [one] { $n } segundo
       *[other] { $n } segundos
    }
duration-minute =
    { $n ->
        [one] { $n } minuto
       *[other] { $n } minutos
    }
duration-hour =
    { $n ->
        [one] { $n } hora
       *[other] { $n } horas
    }
duration-day =
    { $n ->
        [one] { $n } dia
       *[other] { $n } dias
    }
duration-and = { $init } e { $last }
duration-separator = {", "}
duration-per = { $n } a cada { $duration }

## page

page-back-to = Voltar para { $site }
page-privacy = O que guardamos e por quanto tempo
page-languages = Em outros idiomas:

## errors

errors-unavailable-title = Tente novamente
errors-unavailable = Não foi possível fazer isso agora. Tente novamente daqui a um minuto.
errors-not-found-title = Página não encontrada
errors-not-found = Não há nenhum formulário de inscrição aqui.
errors-not-found-link = Ir para o formulário de inscrição
errors-incomplete-title = Este link está incompleto
errors-incomplete = O link parece ter sido cortado ou alterado. Abra-o de novo a partir do e-mail ou copie o endereço completo no seu navegador.
errors-refused-title = Não foi possível fazer isso
errors-refused = Não foi possível ler a solicitação. Volte à página e tente novamente.
errors-timeout = A solicitação não chegou a tempo. Tente novamente.
errors-internal = Algo deu errado do nosso lado. Tente novamente daqui a um minuto.

## signup

signup-title = Inscrição: { $list }
signup-heading = Inscreva-se em { $list }
signup-intro = Digite seu endereço de e-mail. Vamos enviar um link para você; sua inscrição só vale depois que você abrir o link e confirmar.
signup-email-label = Endereço de e-mail
signup-honeypot-label = Deixe este campo em branco
signup-submit = Inscrever-me
signup-choose-title = Inscrição
signup-choose = Escolha uma lista:
signup-several-title = Inscrição
signup-several-heading = Inscrição
signup-lists-legend = Quais listas você quer receber?
signup-several-consent = Quero receber por e-mail as listas que marquei. Posso cancelar a inscrição em cada uma a qualquer momento.
signup-no-list-ticked = Marque pelo menos uma lista.
signup-optional = opcional
signup-choose-option = Selecione
signup-field-missing = Preencha o campo “{ $field }”.
signup-field-invalid = Verifique o campo “{ $field }”: escolha uma das opções ou escreva um texto mais curto, em uma só linha.
signup-unreadable = Não foi possível ler o formulário. Tente novamente.
signup-unsupported = O formulário foi enviado em um formato que este serviço não entende.
signup-too-large = O formulário era grande demais. Digite apenas seu endereço de e-mail.
signup-origin-not-allowed = Este formulário não pode ser usado a partir do site de onde foi enviado.
signup-invalid-email = Digite um endereço de e-mail válido, como nome@example.com.
signup-consent-required = Marque a caixa para concordar em receber estes e-mails.
signup-unknown-list = Este formulário aponta para uma lista que não existe.
signup-invalid-source = Este formulário envia uma origem que este serviço não aceita. Avise os responsáveis pelo site.
signup-unknown-tag = Este formulário envia uma tag que a lista não conhece. Avise os responsáveis pelo site.
signup-domain-not-allowed = Endereços deste domínio não podem ser usados para se inscrever aqui. Use outro endereço de e-mail.
signup-rate-limited = Inscrições demais a partir da sua rede. Tente novamente mais tarde.
signup-storage-unavailable = Não foi possível salvar sua inscrição agora. Tente novamente daqui a um minuto.

## check inbox

check-inbox-title = Confira sua caixa de entrada
check-inbox-sent = Se o endereço puder receber e-mails, uma mensagem está a caminho. Abra o link que ela contém e clique no botão para confirmar.
check-inbox-sent-for = Se o endereço puder receber e-mails, uma mensagem sobre { $list } está a caminho. Abra o link que ela contém e clique no botão para confirmar.
check-inbox-nothing-arrived = Nada chegou depois de alguns minutos? Olhe na pasta de spam. O link vale só por um tempo limitado; você pode simplesmente se inscrever de novo.
check-inbox-open-inbox = Abrir o { $provider }

## surge

surge-title = Só mais um passo
surge-unusual = Este site está com um tráfego incomum no momento, por isso só envia e-mails de confirmação para quem pedir.
surge-ask = Clique no botão e seu e-mail de confirmação será enviado.
surge-button = Enviar meu e-mail de confirmação
surge-not-you = Não foi você que se inscreveu? Feche esta página e nada será enviado.

## confirm

confirm-title = Confirme sua inscrição: { $list }
confirm-heading = Confirme sua inscrição
confirm-intro = Você pediu para receber { $list } por e-mail. Clique no botão para confirmar; nada será enviado antes disso.
confirm-email-label = Seu endereço de e-mail
confirm-email-hint = Digite o endereço para o qual este e-mail foi enviado. Assim, programas que verificam links automaticamente não conseguem confirmar por você.
confirm-button = Confirmar inscrição
confirm-not-you = Não pediu isso? É só fechar esta página; sem confirmação, você não vai receber mais nada.
confirm-wrong-address = Este não é o endereço para o qual o link foi enviado. Digite-o novamente.
confirm-already-title = Inscrição já confirmada
confirm-already = Este endereço já está inscrito em { $list }. Não é preciso fazer mais nada.
confirm-done-title = Inscrição confirmada
confirm-done = Obrigado! Seu endereço agora está inscrito em { $list }.
confirm-done-any = Obrigado! Seu endereço agora está inscrito.
confirm-expired-title = Este link expirou
confirm-expired = O link de confirmação não é mais válido: ele expirou, foi substituído por um e-mail mais recente ou já foi usado. Você pode se inscrever de novo.
confirm-sign-up-again = Inscrever-me de novo

## manage

manage-title = Remover meu endereço
manage-intro = Isto remove seu endereço de { $list }. Você não vai receber mais e-mails dessa lista.
manage-intro-any = Isto remove seu endereço da lista para a qual este link foi enviado. Você não vai receber mais e-mails dessa lista.
manage-button = Remover meu endereço
manage-removed-title = Endereço removido
manage-removed = Seu endereço foi removido de { $list }. Você não vai receber mais e-mails dessa lista.
manage-removed-any = Seu endereço foi removido. Você não vai receber mais e-mails desta lista.

## preferences

preferences-title = Suas preferências de e-mail
preferences-intro = Marque as listas de { $site } que você quer receber, desmarque as que não quer mais e salve.
preferences-legend = Listas
preferences-pending = Pendente: aguardando sua confirmação.
preferences-kept = O que você nos informou ao se inscrever:
preferences-save = Salvar
preferences-remove-all-heading = Remover meu endereço
preferences-remove-all-intro = Ou remova seu endereço de todas estas listas de uma vez. Você não vai receber mais e-mails delas.
preferences-remove-all = Remover-me de todas
preferences-saved-title = Preferências salvas
preferences-saved = Suas escolhas para { $site } foram salvas. Você só vai receber e-mails das listas que marcou.
preferences-saved-any = Suas escolhas foram salvas. Você só vai receber e-mails das listas que marcou.
preferences-unreadable-title = Não foi possível ler o formulário
preferences-unreadable = Nada foi alterado. Abra de novo o link do e-mail e salve mais uma vez.

## privacy

privacy-title = Privacidade: { $list }
privacy-heading = O que acontece com seu endereço
privacy-intro = Esta página descreve o que é guardado quando você se inscreve em { $list } e por quanto tempo.
privacy-stored-heading = O que é guardado
privacy-stored = Seu endereço de e-mail, a lista, a versão do texto de consentimento que você aceitou ({ $version }) e o próprio texto, quando você se inscreveu, e quando e como confirmou (inclusive quanto tempo depois do e-mail). Se o formulário os informar, também o local de onde você se inscreveu (como “homepage-footer”) e os assuntos que ele lista.
privacy-fields = O formulário também pede: { $fields }. O que você preencher ali é guardado com sua inscrição, pelo mesmo tempo que o restante, e mostrado na sua página de preferências.
privacy-no-ip = Seu endereço IP não é guardado. Para limitar abusos, o signupd conta as inscrições por rede sob um hash irreversível da rede, nunca sob o próprio endereço: { $limits }. Cada contador cobre no máximo { $duration } e é excluído na limpeza seguinte.
privacy-mail-heading = Os e-mails
privacy-mail = Você recebe um e-mail com um link de confirmação e, se você se inscrever de novo, no máximo um novo a cada { $duration }. Nada mais é enviado até você confirmar.
privacy-unconfirmed = Se você não confirmar, o link para de funcionar { $duration } depois do último e-mail, e seu endereço é excluído na limpeza seguinte.
privacy-neighbourhood = Todas as redes de uma mesma vizinhança (um bloco de endereços de um mesmo provedor) também são contadas juntas: { $limits }.
privacy-never-mailed = Se o e-mail de confirmação ainda não pôde ser enviado (quando muitas pessoas se inscrevem ao mesmo tempo), seu endereço é excluído { $duration } depois da sua inscrição, tendo o e-mail saído ou não.
privacy-cap =
    Para que ninguém consiga lotar sua caixa de entrada digitando seu endereço em muitos formulários, um mesmo endereço recebe no máximo { $n ->
        [one] { $n } e-mail
       *[other] { $n } e-mails
    } de confirmação a cada 24 horas, somando todas as listas deste serviço. Para isso, um hash irreversível do seu endereço é guardado por um dia, junto com o horário de cada um desses e-mails.
privacy-reputation = Quando você confirma, um hash irreversível da sua rede (um bloco de endereços de um mesmo provedor) é guardado com a data, por { $duration }: quando muitas pessoas se inscrevem ao mesmo tempo, os e-mails para redes onde as pessoas confirmam saem primeiro. Nada mais sobre a confirmação é guardado com ele.
privacy-removal-heading = Como remover seu endereço
privacy-removal = Todo e-mail tem um link para remover seu endereço. Quando você o usa, seu endereço é excluído. Só um hash irreversível dele é mantido, para que ele nunca mais receba e-mails sem uma nova confirmação — ou nunca mais, se você indicou que a inscrição não foi sua.
privacy-shared = Quando você confirma ou remove seu endereço, os sistemas do próprio responsável pelo serviço são avisados, com seu endereço e aquilo com que você concordou.
privacy-contact = Dúvidas? Escreva para { $address }.

## mail

mail-greeting = Olá,
mail-asked = Alguém (esperamos que você) pediu para receber { $list } neste endereço.
mail-how = Para confirmar, abra este link e clique no botão “{ $button }”:
mail-confirm-link = Confirmar minha inscrição
mail-copy = Ou copie este endereço no seu navegador:
mail-until = O link vale até { $date }. Até você confirmar, nada mais será enviado.
mail-not-you = Não pediu isso? Você pode ignorar este e-mail ou remover este endereço de vez:
mail-remove-for-good = Remover este endereço
mail-welcome = Seu endereço agora está inscrito em { $list }. Obrigado por confirmar.
mail-preferences-any-time = Na sua página de preferências você pode escolher, a qualquer momento, o que recebe de nós, ou cancelar a inscrição:
mail-preferences-link = Abrir minha página de preferências
mail-automated = Esta é uma mensagem automática.
mail-privacy = O que guardamos e por quanto tempo:
mail-confirm-subject = Confirme sua inscrição
mail-welcome-subject = Inscrição confirmada

## language

language-name = Português (Brasil)
